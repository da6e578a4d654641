"""The campaign's attacks on the irtt reflector and client (issue 33 items 3, 8, 9). Mixed into campaign.Campaign; each attack
adds its row with self.row(...), as fleet.py's do. The reflector (misura reflect --irtt) and the hostile irtt servers (Python,
below) run in host 2's namespace, the attackers and misura's client in host 1's; about 15 s in all."""

import json
import shutil
import signal
import subprocess
import sys
import time

H2 = "198.18.0.2"

# irtt's parameter encoding (type as an unsigned varint, value zig-zag), for the attackers and the hostile servers.
VARINTS = """
def uv(n):
    b = b''
    while True:
        c = n & 0x7f; n >>= 7
        if n: b += bytes([c | 0x80])
        else: return b + bytes([c])
def zz(v): return v * 2 if v >= 0 else -2 * v - 1
"""

# From 198.18.0.11: 4096 valid irtt opens from one port in 0.7 s, then 1000 header-only (4-byte) opens. Prints the answers to
# each kind and the most bytes any answer had over its open.
OPEN_FLOOD = VARINTS + """
import json, socket, sys, time
dst = (sys.argv[1], int(sys.argv[2]))
p = b''.join(uv(t) + uv(zz(v)) for t, v in [(1, 1), (2, 60 * 10**9), (3, 10**9), (5, 3), (6, 3), (7, 3)])
op = b'\\x14\\xa7\\x5b\\x01' + p
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('198.18.0.11', 0)); s.setblocking(False)
r = {'full': 0, 'short': 0, 'over': -9999}
def drain(kind, n):
    while True:
        try: d = s.recv(9999)
        except OSError: return
        r[kind] += 1; r['over'] = max(r['over'], len(d) - n)
t = time.time()
for i in range(4096):
    s.sendto(op, dst); drain('full', len(op))
    time.sleep(max(0, t + 0.7 * i / 4096 - time.time()))
r['seconds'] = round(time.time() - t, 2)
time.sleep(0.2); drain('full', len(op))
for i in range(1000):
    s.sendto(b'\\x14\\xa7\\x5b\\x01', dst); time.sleep(0.0002)
time.sleep(0.2); drain('short', 4)
print(json.dumps(r))
"""

# A hostile irtt server on argv[1]:argv[2]: grants what is asked with GRANT (JSON: parameter type -> value) written over it,
# answers each echo with receive and send stamps PROC ns apart, and prints the echoes it saw.
HOSTILE = VARINTS + """
import json, socket, struct, sys, time
GRANT = {int(k): v for k, v in json.loads(sys.argv[3]).items()}
PROC = int(sys.argv[4])
def rd(b, i):
    n = 0; k = 0
    while True:
        c = b[i]; i += 1; n |= (c & 0x7f) << k; k += 7
        if c < 0x80: return n, i
def params(b):
    p = {}; i = 0
    while i < len(b):
        t, i = rd(b, i); v, i = rd(b, i)
        p[t] = (v >> 1) if v % 2 == 0 else -((v + 1) >> 1)
    return p
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((sys.argv[1], int(sys.argv[2])))
echoes = 0; t = time.time()
while time.time() - t < 25:
    s.settimeout(0.5)
    try: d, a = s.recvfrom(9999)
    except OSError: continue
    if d[:3] != b'\\x14\\xa7\\x5b': continue
    f = d[3]
    if f & 1:
        p = params(d[4:]); p.update(GRANT)
        body = b''.join(uv(k) + uv(zz(v)) for k, v in sorted(p.items()) if v)
        s.sendto(b'\\x14\\xa7\\x5b\\x03' + struct.pack('<Q', 0x1234567) + body, a)
    elif f == 0 and len(d) >= 60:
        echoes += 1; r = bytearray(d); r[3] = 2
        w = time.time_ns(); m = time.monotonic_ns()
        struct.pack_into('<qqqq', r, 28, w, m, w + PROC, m + PROC); s.sendto(bytes(r), a)
        print(echoes, flush=True)
    elif f & 4:
        break
"""


class IrttAttacks:
    def irtt_attacks(self):
        attacks = [self.irtt_open_flood, self.irtt_hostile_grants, self.irtt_impossible_processing]
        self.run_attacks(attacks)

    # --- plumbing -------------------------------------------------------
    def irtt_rtt(self, port, extra, timeout=20):
        """misura rtt --peer irtt from host 1 to host 2's port: exit code, seconds, its JSON (or {})."""
        t = time.monotonic()
        try:
            r = self.run([self.misura, "--no-store", "rtt", f"{H2}:{port}", "--peer", "irtt", "--json", "-q"]
                         + list(extra), ns=self.ns(1), timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, time.monotonic() - t, {}, "still running when killed"
        took = time.monotonic() - t
        try:
            v = json.loads(r.stdout)
        except ValueError:
            v = {}
        return r.returncode, took, v, r.stderr.decode(errors="replace").strip()

    def hostile(self, port, grant, proc_ns):
        p = self.spawn([sys.executable, "-c", HOSTILE, H2, str(port), json.dumps(grant), str(proc_ns)],
                       ns=self.ns(2), stdout=subprocess.PIPE)
        time.sleep(0.4)
        return p

    @staticmethod
    def echoes(p):
        p.kill()
        out, _ = p.communicate(timeout=5)
        lines = out.decode().split()
        return int(lines[-1]) if lines else 0

    # --- the attacks ------------------------------------------------------
    def irtt_open_flood(self):
        port = 2112
        refl = self.spawn([self.misura, "--no-store", "reflect", "--irtt", str(port), "--listen", H2,
                           "--duration", "30s", "-q", "--json"], ns=self.ns(2), stdout=subprocess.PIPE)
        time.sleep(0.5)
        before = self.stats(refl.pid)
        r = self.run([sys.executable, "-c", OPEN_FLOOD, H2, str(port)], ns=self.ns(1), timeout=30)
        try:
            a = json.loads(r.stdout.decode().strip().splitlines()[-1])
        except (IndexError, ValueError):
            a = {"error": r.stderr.decode()[-200:]}
        # A real client from another address right after: irtt's own when installed, else misura's.
        if shutil.which("irtt"):
            c = self.run(["irtt", "client", "-Q", "-o", "-", "-d", "1s", "-i", "10ms", f"{H2}:{port}"],
                         ns=self.ns(1), timeout=20)
            try:
                st = json.loads(c.stdout)["stats"]
                got, sent, who = st["packets_received"], st["packets_sent"], "irtt client"
            except (ValueError, KeyError):
                got, sent, who = 0, 100, "irtt client"
        else:
            code, _, v, _ = self.irtt_rtt(port, ["--count", "100", "--period", "10ms"])
            got, sent, who = (v.get("totals") or {}).get("received", 0), 100, "misura rtt --peer irtt"
        after = self.stats(refl.pid)
        alive = refl.poll() is None
        refl.send_signal(signal.SIGINT)
        out, _ = refl.communicate(timeout=15)
        try:
            cn = json.loads(out)["counters"]
        except (ValueError, KeyError):
            cn = {}
        ok = (alive and got == sent and sent > 0 and a.get("full", 99) <= 20 and a.get("short") == 0
              and a.get("over", 99) <= 8)
        self.row("irtt: 4096 opens from one address in 0.7 s, then 1000 4-byte opens",
                 f"{4096 / max(a.get('seconds') or 0.7, 0.1):,.0f}/s", alive, before, after,
                 f"{who} from another address {got}/{sent}; flood answered {a.get('full')}, 4-byte opens "
                 f"answered {a.get('short')}, largest answer {a.get('over')} B over its open; reflector: "
                 f"{cn.get('opened')} opened, {cn.get('refused_source_cap')} refused at the cap, "
                 f"{cn.get('open_rate_limited')} over the open rate",
                 ok, "goal: the real client served, no 4-byte open answered, no answer over open + 8 B token")

    def irtt_hostile_grants(self):
        # (grant, misura's flags, what was asked): issue 33 item 8's three grants, and a restriction within the request.
        cases = [({"2": 10**18}, ["--duration", "2s", "--period", "10ms"], "duration 10^18 ns for 2 s"),
                 ({"3": 1}, ["--count", "200", "--period", "10ms"], "interval 1 ns for 10 ms"),
                 ({"3": 3600 * 10**9}, ["--count", "5", "--period", "10ms"], "interval 3600 s for 10 ms")]
        results, ok = [], True
        for i, (grant, flags, what) in enumerate(cases):
            srv = self.hostile(2130 + i, grant, 1000)
            code, took, _, err = self.irtt_rtt(2130 + i, flags)
            n = self.echoes(srv)
            good = code == 5 and n == 0 and took < 5 and "granted" in err
            ok &= good
            results.append(f"{what}: exit {code} in {took:.2f} s, {n} probes")
        srv = self.hostile(2133, {"3": 10**9}, 1000)
        code, took, v, _ = self.irtt_rtt(2133, ["--count", "5", "--period", "10ms"])
        n = self.echoes(srv)
        short = code == 0 and v.get("complete") is False and "1 of the 5" in str(v.get("stop_reason"))
        ok &= short
        results.append(f"interval 1 s for 5 x 10 ms: exit {code}, {n} probe, complete={v.get('complete')}")
        self.row("irtt servers granting past the request", "4 sessions", True, (None, None), (None, None),
                 "; ".join(results), ok,
                 "goal: exit 5 naming both values before any probe; a restriction is not 'finished'")

    def irtt_impossible_processing(self):
        results, ok = [], True
        for i, proc in enumerate([-10**9, 10 * 10**9]):
            srv = self.hostile(2134 + i, {}, proc)
            code, _, v, err = self.irtt_rtt(2134 + i, ["--count", "5", "--period", "10ms"])
            self.echoes(srv)
            # rtt's result: the server's processing is the turnaround, the RTT
            # without it the network RTT; irtt's own counts are in `irtt`.
            irtt, overall = v.get("irtt") or {}, v.get("overall") or {}
            flagged, answered = irtt.get("implausible_processing"), (v.get("totals") or {}).get("received")
            good = (code == 0 and flagged == 5 and overall.get("turnaround") is None
                    and overall.get("network_rtt") is None and "cannot be" in err)
            ok &= good
            results.append(f"{proc / 1e9:+.0f} s: exit {code}, {flagged}/{answered} flagged, "
                           f"turnaround {overall.get('turnaround')}")
        self.row("irtt server processing of -1 s and +10 s", "2 sessions", True, (None, None), (None, None),
                 "; ".join(results), ok, "goal: flagged, named, out of the processing and RTT-minus figures")
