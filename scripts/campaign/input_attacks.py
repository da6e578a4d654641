"""The campaign's attacks on the misura's own protocol client, calibration and stored-run inputs (issue 33 items 7, 9-12, 13). Mixed into campaign.Campaign; each attack
adds its row with self.row(...), as fleet.py's do."""

import json
import os
import signal
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROFILE = os.path.join(HERE, "..", "..", "crates", "report", "tests", "fixtures", "profile.json")


class InputAttacks:
    def input_attacks(self):
        attacks = [self.ia_profile_beyond_physics, self.ia_fifo_inputs, self.ia_dripping_server,
                   self.ia_lying_server, self.ia_huge_stored_rows,
                   self.ia_forged_warmup_frames]
        self.run_attacks(attacks)

    def ia_run(self, args, limit=20, term_after=None):
        """misura ARGS: (exit code or "hung", stderr, seconds). With term_after,
        SIGTERM is sent then; a process still there `limit` s later is killed."""
        t = time.monotonic()
        p = subprocess.Popen([self.misura, "--no-store"] + args, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=self.env)
        try:
            if term_after is not None:
                try:
                    p.wait(timeout=term_after)
                except subprocess.TimeoutExpired:
                    p.send_signal(signal.SIGTERM)
            _, err = p.communicate(timeout=limit)
            return p.returncode, err.decode(errors="replace"), time.monotonic() - t
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            return "hung", "", time.monotonic() - t

    # item 10
    def ia_profile_beyond_physics(self):
        spoils = [("user.alpha_ns", ("user", "alpha_ns"), 1e308),
                  ("kernel.beta_ns_per_byte", ("kernel", "beta_ns_per_byte"), 1e15),
                  ("link.rate_bps", ("link", "rate_bps"), 0)]
        failed = []
        for field, (a, b), v in spoils:
            with open(PROFILE) as f:
                p = json.load(f)
            p[a][b] = v
            path = os.path.join(self.work, "ia-profile.json")
            with open(path, "w") as f:
                json.dump(p, f)
            code, err, _ = self.ia_run(["oneway", "--tx", "lo", "--rx", "lo",
                                        "--calibration", path])
            if code != 7 or f"{field} = " not in err:
                failed.append(f"{field}={v} → {code}")
        self.row("calibration profile beyond physics (α=1e308, β=1e15, rate 0)", "-", True,
                 (None, None), (None, None),
                 f"{len(spoils) - len(failed)}/{len(spoils)} refused, exit 7 naming the field",
                 not failed, "; ".join(failed) or "before: α=1e308 gave SUT latency i64::MIN, exit 0")

    # item 11
    def ia_fifo_inputs(self):
        fifo = os.path.join(self.work, "ia-fifo")
        if not os.path.exists(fifo):
            os.mkfifo(fifo)
        cases = [["oneway", "--tx", "lo", "--rx", "lo", "--calibration", fifo],
                 ["rtt", "127.0.0.1", "--key-file", fifo],
                 ["agent", "--config", fifo],
                 ["report", fifo, "--html", "/dev/null"]]
        failed, worst = [], 0.0
        for c in cases:
            code, err, secs = self.ia_run(c, limit=5, term_after=3)
            worst = max(worst, secs)
            if code in (0, "hung", None) or "FIFO" not in err:
                failed.append(f"{c[0]} → {code}")
        self.row("a FIFO as --calibration, --key-file, --config, report's file", "-", True,
                 (None, None), (None, None),
                 f"{len(cases) - len(failed)}/{len(cases)} refused naming the FIFO, slowest {worst:.2f} s",
                 not failed, "; ".join(failed) or "before: blocked in open(), SIGTERM ignored")

    # item 7
    def ia_dripping_server(self):
        """A fake misura server drips a valid HELLO a byte a second: the
        client must give up within the message deadline (10 s), and end at
        once on SIGTERM."""
        import socket
        import struct
        import threading
        hello = bytes.fromhex("4d535243") + b"\x01\x01" + b"\x00\x00" + struct.pack(">I", 0)
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        port = srv.getsockname()[1]
        done = threading.Event()

        def drip(c):
            for b in hello * 100:
                if done.is_set():
                    break
                try:
                    c.send(bytes([b]))
                except OSError:
                    break
                time.sleep(1)
            c.close()

        def serve():
            srv.settimeout(0.5)
            while not done.is_set():
                try:
                    c, _ = srv.accept()
                except OSError:
                    continue
                threading.Thread(target=drip, args=(c,), daemon=True).start()

        threading.Thread(target=serve, daemon=True).start()
        try:
            args = ["tcp", f"127.0.0.1:{port}", "--duration", "1s"]
            code, err, alone = self.ia_run(args, limit=30)
            code2, _, termed = self.ia_run(args, limit=10, term_after=2)
        finally:
            done.set()
            srv.close()
        after_term = termed - 2
        ok = code not in (0, "hung") and alone < 15 and code2 != "hung" and after_term < 1
        self.row("misura server dripping HELLO 1 byte/s", "1 B/s", True, (None, None), (None, None),
                 f"gave up after {alone:.1f} s (exit {code}); SIGTERM at 2 s: ended {after_term:.2f} s later",
                 ok, "before: read past 70 s, SIGTERM ignored")


    # item 9
    def ia_lying_server(self):
        """A fake misura server takes a tcp test and answers DONE with 2^63
        bytes in 1 ns, and stream counts whose sum wraps past 2^64."""
        import socket
        import struct
        import threading

        def msg(typ, fields):
            body = b""
            for fid, kind, val in fields:
                v = struct.pack(">Q", val) if kind == 1 else val
                body += struct.pack(">HBH", fid, kind, len(v)) + v
            return struct.pack(">IBBHI", 0x4D535243, 1, typ, len(fields), len(body)) + body

        def read(c):
            h = b""
            while len(h) < 12:
                b = c.recv(12 - len(h))
                if not b:
                    return None
                h += b
            typ, n = h[5], struct.unpack(">I", h[8:12])[0]
            while n:
                b = c.recv(min(n, 65536))
                if not b:
                    return None
                n -= len(b)
            return typ

        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(16)
        port = srv.getsockname()[1]
        U64, BYTES = 1, 6
        result = msg(6, [(30, U64, 1 << 63), (32, U64, 1),
                         (41, BYTES, struct.pack(">QQ", 2**64 - 6, 2**64 - 6))])

        def one(c):
            try:
                c.sendall(msg(1, [(1, U64, 1), (2, BYTES, bytes(16))]))
                t = read(c)
                if t == 2:
                    c.sendall(msg(3, [(18, U64, 7), (19, U64, port)]))
                    if read(c) == 5:
                        c.sendall(result)
                elif t == 8:
                    while c.recv(1 << 16):
                        pass
            except OSError:
                pass
            c.close()

        def serve():
            srv.settimeout(0.5)
            for _ in range(40):
                try:
                    c, _ = srv.accept()
                except OSError:
                    continue
                threading.Thread(target=one, args=(c,), daemon=True).start()

        threading.Thread(target=serve, daemon=True).start()
        seen = []
        ok = True
        try:
            for extra in ([], ["--bidir"]):
                r = subprocess.run([self.misura, "--no-store", "tcp", "--json", f"127.0.0.1:{port}",
                                    "--duration", "1s", "--streams", "2"] + extra,
                                   capture_output=True, timeout=30, env=self.env)
                try:
                    j = json.loads(r.stdout)
                except ValueError:
                    ok = False
                    seen.append(f"{' '.join(extra) or 'forward'}: no result (exit {r.returncode})")
                    continue
                c = j["clients"][0]
                flagged = "peer.implausible" in json.dumps(j.get("warnings", []))
                good = j["throughput_bps"] < 1.6e12 and flagged and \
                    c["receiver_bytes"] <= c["sent_bytes"] + c["received_bytes"]
                ok = ok and good
                seen.append(f"{' '.join(extra) or 'forward'}: {j['throughput_bps']:.3g} bit/s, "
                            f"receiver {c['receiver_bytes']} B, {'flagged' if flagged else 'not flagged'}")
        finally:
            srv.close()
        self.row("misura server claiming 2^63 B in 1 ns, stream sum past 2^64", "-", True,
                 (None, None), (None, None), "; ".join(seen), ok,
                 "before: 1.48e29 bit/s, exit 0, no warning")


    # item 13
    def ia_huge_stored_rows(self):
        """Three stored runs of 27 MB each (10^6 histogram buckets): history
        and report must stay bounded and say which row is over the bound."""
        import resource
        import sqlite3
        store = os.path.join(self.work, "ia-store.sqlite")
        r = subprocess.run([self.misura, "--store", store, "clock", "sources"],
                           capture_output=True, timeout=60, env=self.env)
        db = sqlite3.connect(store)
        row = db.execute("SELECT started_at, subcommand, target, sizes, timestamp_source, host, "
                         "complete, format, format_version, result FROM runs "
                         "ORDER BY id DESC LIMIT 1").fetchone()
        if row is None:
            raise RuntimeError(f"no run stored: {r.stderr.decode()[-200:]}")
        buckets = ",".join('{"lower_ns":%d,"count":1}' % i for i in range(10**6))
        big = row[9][:-1] + ',"histogram":[' + buckets + ']}'
        for _ in range(3):
            db.execute("INSERT INTO runs (started_at, subcommand, target, sizes, timestamp_source, "
                       "host, complete, format, format_version, result) VALUES "
                       "(?,?,?,?,?,?,?,?,?,?)", row[:9] + (big,))
        db.commit()
        big_id = db.execute("SELECT max(id) FROM runs").fetchone()[0]
        db.close()
        out = []
        ok = True
        html = os.path.join(self.work, "ia-report.html")
        for args in (["history"], ["report", str(big_id), "--html", html]):
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            t = time.monotonic()
            r = subprocess.run([self.misura, "--store", store] + args, capture_output=True,
                               timeout=120, env=self.env)
            secs = time.monotonic() - t
            rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            said = b"over the" in r.stdout + r.stderr
            size = os.path.getsize(html) if os.path.exists(html) else 0
            out.append(f"{args[0]}: {secs:.2f} s, max RSS {max(rss, before) / 1024:.0f} MB, exit "
                       f"{r.returncode}, {'names the bound' if said else 'silent'}"
                       + (f", {size / 1e6:.0f} MB HTML" if args[0] == "report" else ""))
            ok = ok and said and secs < 10 and size < 10**7
        self.row("stored runs of 27 MB (10^6 buckets): history, report", "-", True,
                 (None, None), (None, None), "; ".join(out), ok,
                 "before: history 7.1 s / 875 MB; report 6.0 s / 1.07 GB, 112 MB HTML")


    # item 12
    def ia_forged_warmup_frames(self):
        """On a veth cable of its own, oneway measures for 3 s while an
        attacker on the cable learns the session id from one probe and sends
        200 frames of that session marked as the warm-up stream (0xFFFF)."""
        ns = f"misura-ia-{os.getpid()}"
        subprocess.run(["ip", "netns", "add", ns], check=True)
        try:
            for cmd in (["link", "add", "iatx", "type", "veth", "peer", "name", "iarx"],
                        ["link", "set", "iatx", "up"], ["link", "set", "iarx", "up"]):
                subprocess.run(["ip", "-n", ns] + cmd, check=True)
            forger = r"""
import socket, struct, sys, time
rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88B5))
rx.bind(("iarx", 0)); rx.settimeout(5)
tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
tx.bind(("iatx", 0))
while True:
    f = rx.recv(2048)
    if f[14:18] == b"MSRA" and struct.unpack(">H", f[26:28])[0] == 0:
        break
session = f[22:26]
sent = 0
for i in range(200):
    h = b"MSRA" + bytes([1, 0]) + struct.pack(">H", 46) + session + struct.pack(">HHQQQ", 0xFFFF, 0, 10**6 + i, 0, 0)
    tx.send(f[:14] + h + bytes(46 - len(h)))
    sent += 1
    time.sleep(0.002)
print(sent)
"""
            atk = subprocess.Popen(["ip", "netns", "exec", ns, "python3", "-c", forger],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            r = subprocess.run([self.misura, "--no-store", "oneway", "--netns", ns, "--tx", "iatx",
                                "--rx", "iarx", "--duration", "3s", "--period", "1ms", "--json"],
                               capture_output=True, timeout=60, env=self.env)
            out, err = atk.communicate(timeout=30)
            forged = int(out or b"0")
            try:
                j = json.loads(r.stdout)
            except ValueError:
                raise RuntimeError(f"oneway gave no result (exit {r.returncode}): "
                                   f"{r.stderr.decode()[-300:]}")
            foreign = j.get("totals", {}).get("foreign_frames")
            ok = forged > 0 and isinstance(foreign, int) and foreign >= forged
            self.row("forged frames of the session on the warm-up stream", "500/s", True,
                     (None, None), (None, None),
                     f"{forged} forged, foreign counted {foreign}", ok,
                     "before: counted nowhere (foreign 0)")
        finally:
            subprocess.run(["ip", "netns", "del", ns])

