"""The campaign's attacks on the iperf3 server and client (issue 33 items 1, 2, 4, 5, 6, 9). Mixed into campaign.Campaign; each attack
adds its row with self.row(...), as fleet.py's do.

The hostile peers are plain functions, also run on their own by crates/misura/tests/iperf3.rs:
    python3 iperf3_attacks.py MODE PORT [ARG]
prints one JSON line of what the peer saw. All on 127.0.0.x: no namespace, no root."""

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

COOKIE = b"abcdefghijklmnopqrstuvwxyzabcdefghij\0"
PARAM_EXCHANGE, CREATE_STREAMS, TEST_START, TEST_RUNNING = 9, 10, 1, 2
TEST_END, EXCHANGE_RESULTS, DISPLAY_RESULTS, IPERF_DONE = 4, 13, 14, 16
SERVER_ERROR, ACCESS_DENIED = 0xFE, 0xFF
HOST = "127.0.0.1"


def _recv1(c, wait=10.0):
    c.settimeout(wait)
    try:
        b = c.recv(1)
    except socket.timeout:
        return None
    return b[0] if b else -1


def _json(c, obj):
    b = json.dumps(obj).encode()
    c.sendall(struct.pack(">I", len(b)) + b)


def _read_json(c, wait=10.0):
    c.settimeout(wait)
    n = struct.unpack(">I", _exact(c, 4))[0]
    return json.loads(_exact(c, n))


def _exact(c, n):
    b = b""
    while len(b) < n:
        x = c.recv(n - len(b))
        if not x:
            raise EOFError("closed")
        b += x
    return b


def _start(port, params, cookie=COOKIE):
    """Control connection through PARAM_EXCHANGE and the parameters: (sock, next state)."""
    c = socket.create_connection((HOST, port), timeout=10)
    c.sendall(cookie)
    s = _recv1(c)
    if s != PARAM_EXCHANGE:
        return c, s
    p = {"tcp": True, "time": 1, "parallel": 1, "len": 1000, "client_version": "attack"}
    p.update(params)
    _json(c, p)
    return c, _recv1(c)


def _data(port, cookie=COOKIE):
    d = socket.create_connection((HOST, port), timeout=10)
    d.sendall(cookie)
    return d


def free_port():
    s = socket.socket()
    s.bind((HOST, 0))
    p = s.getsockname()[1]
    s.close()
    return p


def busy_for(port, limit):
    """How long (s) a fresh client is refused ACCESS_DENIED, up to limit: a slot held."""
    t = time.monotonic()
    while time.monotonic() - t < limit:
        cookie = ("probe%031d" % int(time.monotonic() * 1e6)).encode()[:36] + b"\0"
        try:
            c = socket.create_connection((HOST, port), timeout=5)
            c.sendall(cookie)
            s = _recv1(c, 5)
            c.close()
        except OSError:
            s = None
        if s == PARAM_EXCHANGE:
            return time.monotonic() - t
        time.sleep(0.2)
    return None


# --- hostile clients of `misura serve --iperf3` ------------------------------

def trickle(port, silent=""):
    """Item 1: a forward test (time 1 s; 10 s when silent) whose stream trickles a byte every
    30 ms, or says nothing; no TEST_END ever. Prints how long the slot stays held."""
    c, s = _start(port, {"time": 10 if silent else 1})
    assert s == CREATE_STREAMS, s
    d = _data(port)
    assert _recv1(c) == TEST_START and _recv1(c) == TEST_RUNNING
    t = time.monotonic()
    # The trickle runs in a child so this process can time the slot.
    pid = os.fork()
    if pid == 0:
        try:
            while not silent:
                d.send(b"x")
                time.sleep(0.03)
            time.sleep(60)
        finally:
            os._exit(0)
    held = busy_for(port, 25)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return {"held_s": None if held is None else round(time.monotonic() - t, 2)}


def extra_conns(port, n="200"):
    """Item 2: a 1-stream test, then n more connections carrying its cookie. Prints how many
    of them the server kept open."""
    c, s = _start(port, {"time": 3})
    assert s == CREATE_STREAMS, s
    d = _data(port)
    assert _recv1(c) == TEST_START and _recv1(c) == TEST_RUNNING
    extra = []
    for _ in range(int(n)):
        try:
            extra.append(_data(port))
        except OSError:
            pass
    time.sleep(1.0)
    kept = 0
    for e in extra:
        e.setblocking(False)
        try:
            kept += e.recv(1) != b""
        except BlockingIOError:
            kept += 1  # nothing to read, not closed: held
        except OSError:
            pass
    return {"extra": len(extra), "kept_open": kept}


def len0(port, length="0"):
    """Item 4: a reverse test with len=0. Prints the server's answer."""
    c, s = _start(port, {"reverse": True, "len": int(length)})
    out = {"state": s}
    if s == SERVER_ERROR:
        out["error"] = struct.unpack(">ii", _exact(c, 8))[0]
    return out


def udp_spoof(port):
    """Item 5: a UDP test whose connect message is sprayed first from 127.0.0.2. Prints who
    got the server's reply."""
    c, s = _start(port, {"tcp": False, "udp": True, "bandwidth": 1000000, "len": 1000})
    assert s == CREATE_STREAMS, s
    port = int(port)
    spoof = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    spoof.bind(("127.0.0.2", 0))
    spoof.settimeout(0.05)
    spoofed = False
    for _ in range(20):
        spoof.sendto(b"9876", (HOST, port))
        try:
            spoofed = spoofed or len(spoof.recv(64)) == 4
        except socket.timeout:
            pass
    real = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    real.connect((HOST, port))
    real.send(b"9876")
    real.settimeout(3)
    try:
        got = len(real.recv(64)) == 4
    except socket.timeout:
        got = False
    return {"spoofer_won": spoofed, "client_answered": got}


def claims(port, what="bytes"):
    """Item 9 (server side): a reverse test whose results claim 2^53 bytes received (or a
    negative CPU). Prints nothing of interest: serve's report says what it made of it."""
    c, s = _start(port, {"reverse": True, "time": 1, "len": 1000})
    assert s == CREATE_STREAMS, s
    d = _data(port)
    assert _recv1(c) == TEST_START and _recv1(c) == TEST_RUNNING
    t, got = time.monotonic(), 0
    d.settimeout(0.2)
    while time.monotonic() - t < 1:
        try:
            got += len(d.recv(65536))
        except socket.timeout:
            pass
    c.sendall(bytes([TEST_END]))
    while _recv1(c) not in (EXCHANGE_RESULTS, None, -1):
        pass
    big = what == "bytes"
    _json(c, {"cpu_util_total": 1.0 if big else -50.0, "cpu_util_user": 1.0, "cpu_util_system": 0.0,
              "sender_has_retransmits": -1,
              "streams": [{"id": 1, "bytes": 2 ** 53 if big else got, "retransmits": -1, "jitter": 0,
                           "errors": 0, "packets": 0, "start_time": 0, "end_time": 1}]})
    _read_json(c)
    _recv1(c)
    c.sendall(bytes([IPERF_DONE]))
    return {"received": got}


# --- hostile servers for `misura tcp --peer iperf3` --------------------------

def fake_server(port, mode):
    """Items 6 and 9 (client side): an iperf3 server on port. endless: the reverse test's data
    never stops and no EXCHANGE_RESULTS; trickle: the same, a byte every 30 ms; claims: a
    forward test answered with 2^53 bytes received and a negative CPU. Serves one test."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((HOST, int(port)))
    ls.listen(8)
    print(json.dumps({"listening": True}), flush=True)
    c, _ = ls.accept()
    _exact(c, 37)
    c.sendall(bytes([PARAM_EXCHANGE]))
    _read_json(c)
    c.sendall(bytes([CREATE_STREAMS]))
    d, _ = ls.accept()
    _exact(d, 37)
    c.sendall(bytes([TEST_START, TEST_RUNNING]))
    t = time.monotonic()
    if mode == "claims":
        d.settimeout(0.5)
        while _recv1(c, 0.05) != TEST_END and time.monotonic() - t < 30:
            try:
                d.recv(1 << 16)
            except socket.timeout:
                pass
        c.sendall(bytes([EXCHANGE_RESULTS]))
        _read_json(c)
        _json(c, {"cpu_util_total": -5.0, "cpu_util_user": -5.0, "cpu_util_system": 0.0,
                  "sender_has_retransmits": -1,
                  "streams": [{"id": 1, "bytes": 2 ** 53, "retransmits": -1, "jitter": 0,
                               "errors": 0, "packets": 0, "start_time": 0, "end_time": 1}]})
        c.sendall(bytes([DISPLAY_RESULTS]))
        _recv1(c, 5)
        return {"served": True}
    buf = b"y" * (1 if mode == "trickle" else 65536)
    d.settimeout(1)
    while time.monotonic() - t < 60:
        try:
            d.send(buf)
        except socket.timeout:
            pass
        except OSError:
            break  # the client closed: it ended
        if mode == "trickle":
            time.sleep(0.03)
    return {"sent_for_s": round(time.monotonic() - t, 2)}


PEERS = {"trickle": trickle, "extra": extra_conns, "len0": len0, "udp_spoof": udp_spoof,
         "claims": claims, "server": fake_server}


# --- the campaign part -------------------------------------------------------

class Iperf3Attacks:
    def _i3_peer(self, mode, *args, timeout=40):
        r = subprocess.run([sys.executable, os.path.abspath(__file__), mode] + [str(a) for a in args],
                           capture_output=True, timeout=timeout)
        lines = r.stdout.decode().strip().splitlines()
        if not lines:
            raise RuntimeError(f"{mode}: {r.stderr.decode()[-300:]}")
        return json.loads(lines[-1])

    def _i3_serve(self, extra=(), prlimit=None):
        port, ip3 = free_port(), free_port()
        self.i3_json = os.path.join(self.work, f"serve-{ip3}.json")
        argv = [self.misura, "--no-store", "serve", "--listen", f"{HOST}:{port}", "-q",
                "--iperf3", str(ip3), "--idle-timeout", "3s", "--export-json", self.i3_json] + list(extra)
        if prlimit:
            argv = ["prlimit", f"--nofile={prlimit}"] + argv
        p = self.spawn(argv)
        for _ in range(100):
            try:
                socket.create_connection((HOST, ip3), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        time.sleep(0.3)  # the probe's own connection is dropped at the handshake timeout
        return p, ip3

    def _i3_stop(self, p):
        p.send_signal(signal.SIGINT)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
        try:
            with open(self.i3_json) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    @staticmethod
    def _fds(p):
        try:
            return len(os.listdir(f"/proc/{p.pid}/fd"))
        except OSError:
            return None

    @staticmethod
    def _cpu_s(pid):
        with open(f"/proc/{pid}/stat") as f:
            x = f.read().rsplit(")", 1)[1].split()
        return (int(x[11]) + int(x[12])) / os.sysconf("SC_CLK_TCK")

    def i3_trickle(self):
        for silent in ("", "silent"):
            p, port = self._i3_serve(["--handshake-timeout", "2s"])
            r = self._i3_peer("trickle", port, silent)
            self._i3_stop(p)
            held = r["held_s"]
            # time (1 s; silent 10 s) + --idle-timeout 3 s bounds it; silent: idle 3 s
            ok = held is not None and held < (6 if silent else 6)
            self.row(f"iperf3_{'silent' if silent else 'trickle'}_stream", "-", True, (None, None), (None, None),
                     f"slot held {held} s", ok, "bound: test time + --idle-timeout 3s; silent: 3 s")

    def i3_extra(self):
        p, port = self._i3_serve(["--max-connections", "64"])
        r = self._i3_peer("extra", port, 200)
        fds = self._fds(p)
        self._i3_stop(p)
        self.row("iperf3_extra_data_connections", "200 conns", True, (None, None), (None, fds),
                 f"{r['kept_open']} of {r['extra']} kept open", r["kept_open"] == 0)

    def i3_emfile(self):
        p, port = self._i3_serve(["--max-connections", "256", "--handshake-timeout", "5s"], prlimit=40)
        socks = []
        for _ in range(80):
            try:
                socks.append(socket.create_connection((HOST, port), timeout=1))
            except OSError:
                break
        time.sleep(0.5)
        c0 = self._cpu_s(p.pid)
        time.sleep(2.0)
        cpu = (self._cpu_s(p.pid) - c0) / 2.0 * 100
        for s in socks:
            s.close()
        self._i3_stop(p)
        self.row("iperf3_accept_emfile", "80 conns, nofile 40", True, (None, None), (None, None),
                 f"serve used {cpu:.0f} % CPU out of descriptors", cpu < 20)

    def i3_len0(self):
        p, port = self._i3_serve()
        r = self._i3_peer("len0", port, 0)
        self._i3_stop(p)
        self.row("iperf3_len0", "-", True, (None, None), (None, None), json.dumps(r),
                 r.get("state") == SERVER_ERROR and r.get("error") == 7)

    def i3_udp_spoof(self):
        p, port = self._i3_serve()
        r = self._i3_peer("udp_spoof", port)
        self._i3_stop(p)
        self.row("iperf3_udp_connect_spoof", "20 datagrams", True, (None, None), (None, None), json.dumps(r),
                 not r["spoofer_won"] and r["client_answered"])

    def i3_claims_server(self):
        p, port = self._i3_serve()
        self._i3_peer("claims", port, "bytes")
        rep = self._i3_stop(p)
        t = (rep.get("tests") or [{}])[0]
        bps = t.get("throughput_bps") or 0
        warned = any(w.get("code") == "peer.implausible" for w in t.get("warnings", []))
        self.row("iperf3_serve_client_claims_2^53", "-", True, (None, None), (None, None),
                 f"{bps / 1e9:.2f} Gbit/s, warned {warned}", warned and bps < 1e12)

    def i3_client(self, mode, extra=(), sig=None):
        port = free_port()
        fake = subprocess.Popen([sys.executable, os.path.abspath(__file__), "server", str(port), mode],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.children.append(fake)
        fake.stdout.readline()
        t = time.monotonic()
        m = subprocess.Popen([self.misura, "--no-store", "tcp", f"{HOST}:{port}", "--peer", "iperf3",
                              "--duration", "1s", "--json", "-q"] + list(extra),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env)
        if sig:
            time.sleep(2.0)
            m.send_signal(sig)
        try:
            out, err = m.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            m.kill()
            out, err = m.communicate()
        took = time.monotonic() - t
        fake.kill()
        fake.wait()
        try:
            v = json.loads(out)
        except ValueError:
            v = {}
        return took, m.returncode, v, err.decode()

    def i3_client_hang(self):
        for mode, sig in (("endless", None), ("trickle", None), ("endless", signal.SIGTERM),
                          ("endless", signal.SIGINT)):
            took, rc, v, _ = self.i3_client(mode, ["--reverse"], sig)
            bound = 2.6 if sig else 13
            name = f"iperf3_client_{mode}" + (f"_{signal.Signals(sig).name}" if sig else "")
            self.row(name, "-", True, (None, None), (None, None),
                     f"exit {rc} after {took:.1f} s, complete {v.get('complete')}",
                     took < bound and v.get("complete") is False, f"bound {bound} s")

    def i3_client_claims(self):
        took, rc, v, err = self.i3_client("claims")
        codes = [w.get("code") for w in v.get("warnings", [])]
        bps = v.get("throughput_bps") or 0
        self.row("iperf3_client_server_claims_2^53", "-", True, (None, None), (None, None),
                 f"{bps / 1e9:.2f} Gbit/s, warnings {codes}, cpu {v.get('peer', {}).get('cpu_util_total_pct')}",
                 "peer.implausible" in codes and bps < 1e12 and "failed the check" in err)

    def iperf3_attacks(self):
        attacks = [self.i3_trickle, self.i3_extra, self.i3_emfile, self.i3_len0, self.i3_udp_spoof,
                   self.i3_claims_server, self.i3_client_hang, self.i3_client_claims]
        self.run_attacks(attacks)


if __name__ == "__main__":
    print(json.dumps(PEERS[sys.argv[1]](*sys.argv[2:])), flush=True)
